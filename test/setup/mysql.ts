import 'reflect-metadata';
process.env.TEST_DB = 'mysql';
